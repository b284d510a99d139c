package dev.sas.core;

/** No workflow with this name (and version) is registered with the runtime. */
public class WorkflowNotFoundException extends SasException {

    private static final long serialVersionUID = 1L;

    private final String workflow;
    private final int version;

    /**
     * @param workflow the name asked for
     * @param version the version asked for, or 0 for any
     */
    public WorkflowNotFoundException(String workflow, int version) {
        super("workflow '" + workflow + "'" + (version > 0 ? " version " + version : "")
                + " is not registered with this runtime; register it with SasRuntime.builder().workflow(...)");
        this.workflow = workflow;
        this.version = version;
    }

    /** The workflow name asked for. */
    public String workflow() {
        return workflow;
    }

    /** The version asked for, or 0 for any. */
    public int version() {
        return version;
    }
}
