package dev.sas.core.functional;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.SasClient;
import dev.sas.core.StateStoreException;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.core.spi.NewTask;
import dev.sas.core.spi.StateStore;
import dev.sas.testing.InMemoryStateStore;
import dev.sas.testing.ManualClock;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Group commit: threads that submit at the same time share one store transaction, each returns
 * once its own task is durable, and one bad task never fails another's submit.
 */
class GroupCommitTest {

    private static final Workflow<String> WF = Workflow.builder("orders", Codec.string())
            .step("only", s -> s.execute(ctx -> "done"))
            .build();

    private final InMemoryStateStore real = new InMemoryStateStore();
    /** Tasks per store call, in call order: one entry per transaction. */
    private final List<Integer> transactions = new CopyOnWriteArrayList<>();
    private final CountDownLatch firstCommitMayFinish = new CountDownLatch(1);
    private volatile boolean holdFirstCommit;
    private volatile String refusedKey;
    private final ExecutorService pool = Executors.newFixedThreadPool(16);

    private final StateStore store = (StateStore) Proxy.newProxyInstance(getClass().getClassLoader(),
            new Class<?>[] {StateStore.class}, (proxy, method, args) -> {
                if (method.getName().equals("submit") || method.getName().equals("submitAll")) {
                    List<?> tasks = method.getName().equals("submit") ? List.of(args[0]) : (List<?>) args[0];
                    boolean first = transactions.isEmpty();
                    transactions.add(tasks.size());
                    if (first && holdFirstCommit) {
                        firstCommitMayFinish.await(30, TimeUnit.SECONDS);
                    }
                    if (tasks.stream().anyMatch(t -> ((NewTask) t).businessKey().equals(refusedKey))) {
                        throw new StateStoreException("value too long for column input (injected)");
                    }
                }
                try {
                    return method.invoke(real, args);
                } catch (InvocationTargetException e) {
                    throw e.getCause();
                }
            });
    private final SasClient client = SasClient.builder().stateStore(store).clock(new ManualClock()).build();

    @AfterEach
    void stop() {
        firstCommitMayFinish.countDown();
        pool.shutdownNow();
    }

    private Future<TaskHandle> submitAsync(String key) {
        return pool.submit(() -> client.submit(WF, key, "in-" + key));
    }

    /** Waits until {@code n} pool threads are parked (queued behind the commit in flight). */
    private void awaitParked(int n) {
        await().atMost(Duration.ofSeconds(30)).until(() -> Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("pool-"))
                .filter(t -> t.getState() == Thread.State.WAITING || t.getState() == Thread.State.TIMED_WAITING)
                .filter(t -> List.of(t.getStackTrace()).stream()
                        .anyMatch(f -> f.getClassName().endsWith("SubmitGroup")))
                .count() >= n);
    }

    @Test
    void submits_queued_behind_a_commit_share_the_next_one() throws Exception {
        holdFirstCommit = true;
        Future<TaskHandle> first = submitAsync("k-0");
        await().atMost(Duration.ofSeconds(30)).until(() -> transactions.size() == 1);
        List<Future<TaskHandle>> rest = new ArrayList<>();
        for (int i = 1; i <= 15; i++) {
            rest.add(submitAsync("k-" + i));
        }
        awaitParked(15);
        firstCommitMayFinish.countDown();

        List<TaskHandle> handles = new ArrayList<>();
        handles.add(first.get(30, TimeUnit.SECONDS));
        for (Future<TaskHandle> f : rest) {
            handles.add(f.get(30, TimeUnit.SECONDS));
        }
        assertThat(transactions).containsExactly(1, 15);
        assertThat(handles).allMatch(TaskHandle::created);
        assertThat(handles.stream().map(TaskHandle::id).collect(Collectors.toSet())).hasSize(16);
        assertThat(real.countByStatus().get(TaskStatus.PENDING)).isEqualTo(16L);
        for (int i = 0; i < 16; i++) {
            assertThat(real.findByBusinessKey("orders", "k-" + i)).isPresent();
        }
    }

    @Test
    void one_refused_task_fails_only_its_own_submit() throws Exception {
        holdFirstCommit = true;
        refusedKey = "bad";
        Future<TaskHandle> first = submitAsync("k-0");
        await().atMost(Duration.ofSeconds(30)).until(() -> transactions.size() == 1);
        List<Future<TaskHandle>> good = new ArrayList<>();
        for (int i = 1; i <= 6; i++) {
            good.add(submitAsync("k-" + i));
        }
        Future<TaskHandle> bad = submitAsync("bad");
        awaitParked(7);
        firstCommitMayFinish.countDown();

        assertThat(first.get(30, TimeUnit.SECONDS).created()).isTrue();
        for (Future<TaskHandle> f : good) {
            assertThat(f.get(30, TimeUnit.SECONDS).created()).isTrue();
        }
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> bad.get(30, TimeUnit.SECONDS))
                .hasCauseInstanceOf(StateStoreException.class).hasMessageContaining("injected");
        assertThat(real.countByStatus().get(TaskStatus.PENDING)).isEqualTo(7L);
        assertThat(real.findByBusinessKey("orders", "bad")).isEmpty();
    }

    @Test
    void racing_submits_of_one_business_key_create_one_task() throws Exception {
        List<Future<TaskHandle>> racing = new ArrayList<>();
        for (int i = 0; i < 16; i++) {
            racing.add(submitAsync("same"));
        }
        List<TaskHandle> handles = new ArrayList<>();
        for (Future<TaskHandle> f : racing) {
            handles.add(f.get(30, TimeUnit.SECONDS));
        }
        assertThat(handles).filteredOn(TaskHandle::created).hasSize(1);
        assertThat(handles.stream().map(TaskHandle::id).collect(Collectors.toSet())).hasSize(1);
        assertThat(real.countByStatus().get(TaskStatus.PENDING)).isEqualTo(1L);
        assertThat(transactions.stream().mapToInt(Integer::intValue).sum()).as("tasks offered to the store")
                .isEqualTo(16);
    }
}
