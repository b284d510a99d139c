package dev.sas.core;

/** No schedule of this name is registered on the store (never registered, or removed). */
public class ScheduleNotFoundException extends SasException {

    private static final long serialVersionUID = 1L;

    private final String name;

    /** @param name the name asked for */
    public ScheduleNotFoundException(String name) {
        super("schedule '" + name + "' is not registered on this store (never registered, or removed); list the"
                + " registered ones with schedules().list() or 'sas schedules list'");
        this.name = name;
    }

    /** The name asked for. */
    public String name() {
        return name;
    }
}
