package dev.sas.spring.boot.internal;

import dev.sas.core.SasClient;
import dev.sas.core.Schedule;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;

/**
 * Registers every {@link Schedule} bean with the store once the context's singletons exist, before
 * the runtime starts. Registering is idempotent, so every node of the application does it; a store
 * that cannot be reached fails the start, as the schema check does. Not API.
 */
public final class ScheduleRegistration implements SmartInitializingSingleton {
    private static final Logger log = LoggerFactory.getLogger(ScheduleRegistration.class);

    private final ObjectProvider<SasClient> client;
    private final ObjectProvider<Schedule> schedules;

    /**
     * @param client the application's client
     * @param schedules the schedule beans
     */
    public ScheduleRegistration(ObjectProvider<SasClient> client, ObjectProvider<Schedule> schedules) {
        this.client = client;
        this.schedules = schedules;
    }

    @Override
    public void afterSingletonsInstantiated() {
        List<Schedule> all = schedules.orderedStream().toList();
        SasClient c = client.getIfUnique();
        if (all.isEmpty() || c == null) {
            return;
        }
        all.forEach(c.schedules()::register);
        log.info("SAS schedules registered: {}", all.stream().map(Schedule::name).toList());
    }
}
