package dev.sas.testing;

import dev.sas.core.StatusUpdate;
import dev.sas.core.TaskEvent;
import dev.sas.core.spi.StatusOutbox;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * The status outbox of {@link InMemoryStateStore}: messages per channel by delivery id, and each
 * channel's lease and position, under the store's lock (so a message exists exactly when its event
 * does). Thread-safe.
 */
final class InMemoryStatusOutbox implements StatusOutbox {

    private final Object lock;
    private final Map<String, TreeMap<Long, StatusUpdate>> pending = new HashMap<>();
    private final Map<String, Channel> channels = new HashMap<>();
    private long nextId = 1;

    private static final class Channel {
        String holder;
        Instant expiresAt = Instant.MIN;
        long lastDeliveryId;
        long delivered;
    }

    InMemoryStatusOutbox(Object lock) {
        this.lock = lock;
    }

    /** Adds the message for {@code event} to {@code channel}'s outbox. Called under the store's lock. */
    void append(String channel, TaskEvent event) {
        long id = nextId++;
        pending.computeIfAbsent(channel, c -> new TreeMap<>()).put(id, new StatusUpdate(channel, id, event));
    }

    @Override
    public void register(String channel, Instant now) {
        Objects.requireNonNull(channel, "channel must not be null");
        synchronized (lock) {
            channels.computeIfAbsent(channel, c -> new Channel());
        }
    }

    @Override
    public Set<String> channels() {
        synchronized (lock) {
            return new HashSet<>(channels.keySet());
        }
    }

    @Override
    public boolean tryAcquire(String channel, String consumerId, Instant now, Duration ttl) {
        Objects.requireNonNull(consumerId, "consumerId must not be null");
        synchronized (lock) {
            Channel c = channels.computeIfAbsent(channel, k -> new Channel());
            if (c.holder == null || c.holder.equals(consumerId) || c.expiresAt.isBefore(now)) {
                c.holder = consumerId;
                c.expiresAt = now.plus(ttl);
                return true;
            }
            return false;
        }
    }

    @Override
    public void release(String channel, String consumerId) {
        synchronized (lock) {
            Channel c = channels.get(channel);
            if (c != null && consumerId.equals(c.holder)) {
                c.holder = null;
                c.expiresAt = Instant.MIN;
            }
        }
    }

    @Override
    public List<StatusUpdate> pending(String channel, int limit) {
        synchronized (lock) {
            TreeMap<Long, StatusUpdate> messages = pending.get(channel);
            List<StatusUpdate> out = new ArrayList<>();
            if (messages != null) {
                for (StatusUpdate m : messages.values()) {
                    if (out.size() >= limit) {
                        break;
                    }
                    out.add(m);
                }
            }
            return out;
        }
    }

    @Override
    public boolean acknowledge(String channel, String consumerId, List<Long> deliveryIds, Instant now) {
        synchronized (lock) {
            TreeMap<Long, StatusUpdate> messages = pending.get(channel);
            if (messages != null) {
                deliveryIds.forEach(messages::remove);
            }
            Channel c = channels.get(channel);
            if (c == null || !consumerId.equals(c.holder) || c.expiresAt.isBefore(now)) {
                return false;
            }
            for (long id : deliveryIds) {
                c.lastDeliveryId = Math.max(c.lastDeliveryId, id);
            }
            c.delivered += deliveryIds.size();
            return true;
        }
    }
}
