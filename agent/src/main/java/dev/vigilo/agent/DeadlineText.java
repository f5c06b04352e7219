package dev.vigilo.agent;

/**
 * A text that stops whoever reads it once a deadline passes or the reading thread is interrupted: {@link #charAt}
 * throws {@link Expired}. RE2/J reads its input one character per step, and a step's work is bounded by the
 * program size ({@link dev.vigilo.config.SafeRegex#MAX_PROGRAM_SIZE}), so this bounds a match's time without a second thread.
 */
final class DeadlineText implements CharSequence {
    private static final int CHECK_EVERY = 64;

    private final String text;
    private final long deadline;
    private int reads;

    DeadlineText(String text, long deadlineNanos) {
        this.text = text;
        this.deadline = deadlineNanos;
    }

    /** Reading stopped. */
    static final class Expired extends RuntimeException {
        private static final long serialVersionUID = 1L;
        final boolean interrupted;

        Expired(boolean interrupted) {
            super(interrupted ? "interrupted" : "deadline passed", null, false, false);
            this.interrupted = interrupted;
        }
    }

    @Override
    public int length() {
        return text.length();
    }

    @Override
    public char charAt(int index) {
        if (++reads % CHECK_EVERY == 0) {
            if (Thread.currentThread().isInterrupted()) {
                throw new Expired(true);
            }
            if (System.nanoTime() - deadline > 0) {
                throw new Expired(false);
            }
        }
        return text.charAt(index);
    }

    @Override
    public CharSequence subSequence(int start, int end) {
        return new DeadlineText(text.substring(start, end), deadline);
    }

    @Override
    public String toString() {
        return text;
    }
}
