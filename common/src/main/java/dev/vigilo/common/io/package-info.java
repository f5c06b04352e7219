/** Local file mechanics shared by every module: the one crash-safe write ({@link dev.vigilo.common.io.AtomicFiles}). */
package dev.vigilo.common.io;
