package dev.sas.reliability;

import com.rabbitmq.client.Channel;
import dev.sas.core.TaskEvent;
import dev.sas.core.TaskId;
import dev.sas.core.TaskInfo;
import dev.sas.core.TaskQuery;
import dev.sas.core.TaskStatus;
import dev.sas.jdbc.JdbcStateStore;
import dev.sas.rabbitmq.RabbitConnection;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A cross-node reply run: worker JVMs B and C run the tasks that a client-only JVM A submits with a
 * status channel; the coordinator (this) kills and restarts them and, at the end, checks what A heard
 * against the store's event log: every task's RECEIVED and exactly one terminal status, in order per
 * task, nothing missing, after dropping repeats by delivery id. Through the store's outbox
 * (A consumes the channel itself) or, with a RabbitMQ URI, through a broker (B and C publish, A reads
 * the queue). Each run has its own table prefix and queue, dropped at the end.
 */
public final class XNodeRun implements AutoCloseable {
    private static final Set<TaskEvent.Type> TERMINAL = EnumSet.of(TaskEvent.Type.PROCESSED, TaskEvent.Type.ERROR,
            TaskEvent.Type.COMPENSATED, TaskEvent.Type.COMPENSATION_FAILED, TaskEvent.Type.CANCELLED);

    private final String url;
    private final int tasks;
    private final int rate;
    private final String rabbitUri;
    private final Path dir;
    private final String prefix = "x" + UUID.randomUUID().toString().replace("-", "").substring(0, 8) + "_";
    private final String channel;
    private final String queue;
    private final Path out;
    private final JdbcStateStore store;
    private final Map<String, Process> nodes = new ConcurrentHashMap<>();
    private final Map<String, AtomicInteger> submitted = new ConcurrentHashMap<>();
    private final Set<String> ready = ConcurrentHashMap.newKeySet();
    private final List<Process> all = new ArrayList<>();
    private final PrintWriter log;

    /**
     * @param rabbitUri the broker, or null to deliver from the store's outbox
     * @param dir where the nodes' logs and A's received messages go
     */
    public XNodeRun(String url, int tasks, int rate, String rabbitUri, Path dir) throws IOException {
        this.url = url;
        this.tasks = tasks;
        this.rate = rate;
        this.rabbitUri = rabbitUri;
        this.dir = Files.createDirectories(dir);
        this.channel = "a-replies-" + prefix;
        this.queue = "sas-xnode-" + prefix;
        this.out = dir.resolve(prefix + "received.txt");
        this.log = new PrintWriter(Files.newBufferedWriter(dir.resolve(prefix + "run.log")), true);
        this.store = JdbcStateStore.builder().url(url).tablePrefix(prefix).maxPoolSize(4).poolName("xnode-coordinator")
                .build();
        if (rabbitUri != null) {
            try (RabbitConnection rabbit = RabbitConnection.builder().uri(rabbitUri).build();
                 Channel ch = rabbit.openChannel()) {
                ch.queueDeclare(queue, true, false, false, null);
                ch.queuePurge(queue);
            } catch (java.util.concurrent.TimeoutException e) {
                throw new IOException(e);
            }
        }
    }

    /** The file A writes what it hears to. */
    public Path received() {
        return out;
    }

    /** Starts a worker ({@code B}, {@code C}) or the client ({@code A}) under {@code name}. */
    public synchronized void start(String name, boolean client) throws IOException {
        String javaBin = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(javaBin, "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
                "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-cp", cp, XNodeMain.class.getName(),
                "--role", client ? "client" : "worker", "--name", name, "--url", url, "--prefix", prefix,
                "--parent-pid", String.valueOf(ProcessHandle.current().pid()), "--channel", channel,
                "--queue", queue, "--out", out.toString(), "--tasks", String.valueOf(tasks),
                "--rate", String.valueOf(rate)));
        if (rabbitUri != null) {
            cmd.add("--rabbit-uri");
            cmd.add(rabbitUri);
        }
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        all.add(p);
        nodes.put(name, p);
        ready.remove(name);
        submitted.put(name, new AtomicInteger());
        Path nodeLog = dir.resolve(prefix + name + ".log");
        Thread reader = new Thread(() -> {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
                 PrintWriter w = new PrintWriter(Files.newBufferedWriter(nodeLog,
                         java.nio.file.StandardOpenOption.CREATE, java.nio.file.StandardOpenOption.APPEND), true)) {
                String line;
                while ((line = in.readLine()) != null) {
                    if (line.startsWith("READY")) {
                        ready.add(name);
                    } else if (line.startsWith("SUBMITTED ")) {
                        submitted.get(name).set(Integer.parseInt(line.substring(10).trim()));
                        continue;
                    }
                    w.println(line);
                }
            } catch (IOException | RuntimeException e) {
                // the node ended
            }
        }, "xnode-" + name + "-output");
        reader.setDaemon(true);
        reader.start();
        log("started " + name + " pid " + p.pid());
    }

    /** True once the node printed READY. */
    public boolean isReady(String name) {
        return ready.contains(name);
    }

    /** How many tasks the node's current incarnation has submitted. */
    public int submitted(String name) {
        AtomicInteger n = submitted.get(name);
        return n == null ? 0 : n.get();
    }

    /** SIGKILLs the node and waits for it to be gone. */
    public void kill(String name) throws InterruptedException {
        Process p = nodes.get(name);
        p.destroyForcibly();
        p.waitFor(10, TimeUnit.SECONDS);
        log("killed " + name + " (SIGKILL)");
    }

    /** Runs {@code rabbitmqctl <command>} (stop_app, start_app) and says whether it worked. */
    public static boolean rabbitmqctl(String command) throws IOException, InterruptedException {
        Process p = new ProcessBuilder("rabbitmqctl", command).redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
        return p.waitFor(120, TimeUnit.SECONDS) && p.exitValue() == 0;
    }

    /** Tasks of the run in a terminal state, per the store. */
    public long terminalInStore() {
        Map<TaskStatus, Long> counts = store.countByStatus();
        return counts.entrySet().stream().filter(e -> e.getKey().isTerminal()).mapToLong(Map.Entry::getValue).sum();
    }

    /** Tasks for which A heard a terminal status. */
    public long terminalHeard() throws IOException {
        return heard().values().stream().filter(ms -> ms.stream().anyMatch(m -> TERMINAL.contains(m.type()))).count();
    }

    /** One line A wrote. */
    record Heard(long deliveryId, TaskEvent.Type type) {
    }

    private Map<String, List<Heard>> heard() throws IOException {
        Map<String, List<Heard>> byTask = new HashMap<>();
        if (!Files.exists(out)) {
            return byTask;
        }
        String text = Files.readString(out);
        int end = text.lastIndexOf('\n');
        if (end < 0) {
            return byTask;
        }
        for (String line : text.substring(0, end).split("\n")) {
            String[] f = line.split(" ");
            byTask.computeIfAbsent(f[1], k -> new ArrayList<>()).add(new Heard(Long.parseLong(f[0]),
                    TaskEvent.Type.valueOf(f[2])));
        }
        return byTask;
    }

    /** What the checks found. */
    public record Report(int tasks, long terminalInStore, long messagesHeard, long repeats, long recoveredByTimeOut,
            List<String> problems) {
        @Override
        public String toString() {
            return tasks + " tasks, " + terminalInStore + " terminal in the store, " + messagesHeard
                    + " messages heard (" + repeats + " repeats dropped), " + recoveredByTimeOut
                    + " tasks recovered from a killed worker; problems: " + (problems.isEmpty() ? "none"
                    : problems.size() + ", e.g. " + problems.subList(0, Math.min(5, problems.size())));
        }
    }

    /** Compares what A heard with the store's event log, task by task. */
    public Report check() throws IOException {
        Map<String, List<Heard>> heard = heard();
        List<String> problems = new ArrayList<>();
        long messages = 0;
        long repeats = 0;
        long recovered = 0;
        List<TaskInfo> infos = new ArrayList<>();
        TaskQuery q = TaskQuery.all().withLimit(500);
        for (List<TaskInfo> page = store.list(q); !page.isEmpty();
                page = page.size() < 500 ? List.of() : store.list(q.after(page.get(page.size() - 1)))) {
            infos.addAll(page);
        }
        if (infos.size() != tasks) {
            problems.add(infos.size() + " tasks in the store, " + tasks + " expected");
        }
        for (TaskInfo info : infos) {
            String id = info.taskId().value();
            List<TaskEvent.Type> logged = store.events(TaskId.of(id)).stream().map(TaskEvent::type).toList();
            if (logged.contains(TaskEvent.Type.STEP_TIMED_OUT)) {
                recovered++;
            }
            List<Heard> got = heard.getOrDefault(id, List.of());
            messages += got.size();
            Map<Long, Heard> firsts = new LinkedHashMap<>();
            for (Heard h : got) {
                if (firsts.putIfAbsent(h.deliveryId(), h) != null) {
                    repeats++;
                }
            }
            List<Heard> unique = new ArrayList<>(firsts.values());
            List<TaskEvent.Type> types = unique.stream().map(Heard::type).toList();
            if (types.isEmpty() || types.get(0) != TaskEvent.Type.RECEIVED) {
                problems.add(id + ": first message " + (types.isEmpty() ? "none" : types.get(0)));
            }
            long terminals = types.stream().filter(TERMINAL::contains).count();
            if (terminals != 1) {
                problems.add(id + ": " + terminals + " terminal statuses " + types);
            }
            for (int i = 1; i < unique.size(); i++) {
                if (unique.get(i).deliveryId() <= unique.get(i - 1).deliveryId()) {
                    problems.add(id + ": out of order " + unique);
                    break;
                }
            }
            if (!types.equals(logged)) {
                problems.add(id + ": heard " + types + " but the store logged " + logged);
            }
        }
        Set<String> known = new HashSet<>();
        infos.forEach(i -> known.add(i.taskId().value()));
        for (String id : heard.keySet()) {
            if (!known.contains(id)) {
                problems.add("heard of unknown task " + id);
            }
        }
        return new Report(tasks, terminalInStore(), messages, repeats, recovered, problems);
    }

    /** Appends a line to the run's log. */
    public void log(String line) {
        log.println(System.currentTimeMillis() + " " + line);
    }

    /** Kills every node, drops the run's tables and queue. */
    @Override
    public void close() throws java.sql.SQLException {
        for (Process p : all) {
            p.destroyForcibly();
        }
        for (Process p : all) {
            try {
                p.waitFor(10, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        try (java.sql.Connection c = java.sql.DriverManager.getConnection(url);
             java.sql.Statement st = c.createStatement()) {
            for (String t : List.of("event", "step", "task", "supervisor_lease", "runtime_workflow", "reply_outbox",
                    "reply_channel", "agent_gate", "agent_permit", "step_reply", "schedule", "schema_version")) {
                st.execute("DROP TABLE IF EXISTS " + prefix + t);
            }
            if (url.startsWith("jdbc:postgresql")) {
                for (String f : List.of("notify_submitted", "notify_due", "notify_done", "notify_replies")) {
                    st.execute("DROP FUNCTION IF EXISTS " + prefix + f + "() CASCADE");
                }
            }
        } finally {
            store.close();
            if (rabbitUri != null) {
                try (RabbitConnection rabbit = RabbitConnection.builder().uri(rabbitUri).build();
                     Channel ch = rabbit.openChannel()) {
                    ch.queueDelete(queue);
                } catch (IOException | java.util.concurrent.TimeoutException | RuntimeException e) {
                    log("could not delete queue " + queue + ": " + e);
                }
            }
            log.close();
        }
    }
}
