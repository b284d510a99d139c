package dev.sas.testing;

import dev.sas.core.spi.ScheduleSpec;
import dev.sas.core.spi.ScheduleStore;
import dev.sas.core.spi.StoredSchedule;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The recurring schedules of an {@link InMemoryStateStore}, under the store's lock. Thread-safe.
 */
final class InMemorySchedules implements ScheduleStore {

    private final Object lock;
    private final Map<String, StoredSchedule> byName = new TreeMap<>();

    InMemorySchedules(Object lock) {
        this.lock = lock;
    }

    @Override
    public Registration register(ScheduleSpec spec, Instant now) {
        Objects.requireNonNull(spec, "spec must not be null");
        Instant at = ms(now);
        synchronized (lock) {
            StoredSchedule s = byName.get(spec.name());
            if (s == null) {
                byName.put(spec.name(), new StoredSchedule(spec, false, at, at, at));
                return Registration.CREATED;
            }
            if (s.spec().equals(spec)) {
                return Registration.UNCHANGED;
            }
            byName.put(spec.name(), new StoredSchedule(spec, s.paused(), s.lastFireTime(), s.registeredAt(), at));
            return Registration.UPDATED;
        }
    }

    @Override
    public List<StoredSchedule> schedules() {
        synchronized (lock) {
            return List.copyOf(byName.values());
        }
    }

    @Override
    public Optional<StoredSchedule> find(String name) {
        synchronized (lock) {
            return Optional.ofNullable(byName.get(name));
        }
    }

    @Override
    public boolean advance(String name, Instant expected, Instant to, Instant now) {
        synchronized (lock) {
            StoredSchedule s = byName.get(name);
            if (s == null || !s.lastFireTime().equals(ms(expected))) {
                return false;
            }
            byName.put(name, new StoredSchedule(s.spec(), s.paused(), ms(to), s.registeredAt(), s.updatedAt()));
            return true;
        }
    }

    @Override
    public boolean setPaused(String name, boolean paused, Instant now) {
        synchronized (lock) {
            StoredSchedule s = byName.get(name);
            if (s == null) {
                return false;
            }
            if (s.paused() != paused) {
                Instant at = ms(now);
                byName.put(name, new StoredSchedule(s.spec(), paused, paused ? s.lastFireTime() : at, s.registeredAt(),
                        at));
            }
            return true;
        }
    }

    @Override
    public boolean remove(String name) {
        synchronized (lock) {
            return byName.remove(name) != null;
        }
    }

    /** Times at the precision a database keeps. */
    private static Instant ms(Instant t) {
        return t.truncatedTo(ChronoUnit.MILLIS);
    }
}
