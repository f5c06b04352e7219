/**
 * The error taxonomy every module shares. {@link dev.vigilo.common.errors.ErrorKind} names what a caller can do
 * about a failure; one exception class per kind, subclassed by a module only when a caller needs a typed detail. The
 * command line maps kinds to exit codes in one place.
 */
package dev.vigilo.common.errors;
