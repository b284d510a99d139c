package dev.sas.reliability;

/**
 * The fault the harness injects into one task (decided by its index, see
 * {@link ChaosSettings#fault(int)}), and so the states the task may end in. A task without a
 * fault that ends ERROR, COMPENSATED, COMPENSATION_FAILED or CANCELLED is a false failure.
 */
enum Fault {
    /** None: the task must end PROCESSED. */
    NONE,
    /** {@code settle} declines it for good: it must end COMPENSATED. */
    DECLINED,
    /** Its input cannot be decoded: it must end ERROR with the decoding error, with no effect. */
    POISON,
    /**
     * Cancelled once at a random moment: CANCELLED with every applied effect compensated, or
     * PROCESSED (the cancel came too late: {@code cancel} returned false, or the last step was
     * already running, which SAS lets finish).
     */
    CANCEL
}
