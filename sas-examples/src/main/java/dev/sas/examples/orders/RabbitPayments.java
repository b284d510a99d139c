package dev.sas.examples.orders;

import com.rabbitmq.client.Channel;
import dev.sas.core.SasClient;
import dev.sas.rabbitmq.RabbitAgent;
import dev.sas.rabbitmq.RabbitConnection;
import dev.sas.rabbitmq.RabbitAgentReplyConsumer;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;

/**
 * The payment agent of {@code --rabbitmq} mode: the {@link RabbitAgent} the payment step sends its
 * charges through (queues of this run only), the {@link PaymentWorker} process that answers them, and
 * the {@link RabbitAgentReplyConsumer} that completes the steps with the answers. {@link #close()} stops
 * them and deletes the run's queues. Not thread-safe: the run drives it from one thread.
 */
final class RabbitPayments implements AutoCloseable {
    private final String uri;
    private final RabbitConnection rabbit;
    private final RabbitAgent agent;
    private WorkerProcess worker;
    private RabbitAgentReplyConsumer replies;
    private int workersStarted;

    private RabbitPayments(String uri, String tag) {
        this.uri = uri;
        this.rabbit = RabbitConnection.builder().uri(uri).connectionName("shop-" + tag).build();
        // tag::agent[]
        this.agent = RabbitAgent.builder("payment", rabbit)
                .requestQueue("sas.agent.payment." + tag)       // replies: sas.agent.payment.<tag>.replies
                .build();
        // end::agent[]
    }

    /** The payment agent of the run on the broker at {@code uri}, or null if {@code uri} is null. */
    static RabbitPayments connect(String uri, String tag) {
        return uri == null ? null : new RabbitPayments(uri, tag);
    }

    RabbitAgent agent() {
        return agent;
    }

    /** Where the requests go, for the run's header. */
    String describe() {
        return "RabbitMQ " + rabbit.address() + ", queues " + agent.requestQueue() + " and " + agent.replyQueue();
    }

    /** Starts the reply consumer on {@code client}'s store and the first worker process. */
    void start(SasClient client, Shop shop, Path dir, PrintStream out) throws IOException, InterruptedException {
        // tag::consumer[]
        replies = RabbitAgentReplyConsumer.builder(agent, client).build().start();
        // end::consumer[]
        startWorker(shop, dir, out);
    }

    private void startWorker(Shop shop, Path dir, PrintStream out) throws IOException, InterruptedException {
        workersStarted++;
        Path log = dir.resolve("payment-worker-" + workersStarted + ".log");
        worker = WorkerProcess.startPaymentWorker(uri, shop, agent.requestQueue(), log);
        if (!worker.awaitReady(Duration.ofSeconds(60))) {
            throw new IOException("the payment worker JVM did not start; see " + log);
        }
        out.println("  payments:  worker JVM pid " + worker.pid() + " consumes " + agent.requestQueue()
                + " (log " + log.getFileName() + ")");
    }

    /**
     * Starts a new worker, then SIGKILLs the old one (calls in flight die unanswered and
     * unacknowledged, and go back to the queue for the new one). The new one is up first, so that
     * the outage is the redelivery and not a JVM's start on a loaded machine (which took 10 s at a
     * load of 8 and ran a charge out of its time-outs).
     *
     * @return what happened, for the run's summary
     */
    String killAndRestartWorker(Shop shop, Path dir, PrintStream out) throws IOException, InterruptedException {
        WorkerProcess old = worker;
        startWorker(shop, dir, out);
        old.kill();
        out.println("  CRASH: payment worker JVM pid " + old.pid() + " killed (SIGKILL); its unacknowledged requests go"
                + " back to the queue, for worker pid " + worker.pid());
        return "payment worker JVM pid " + old.pid() + " killed (SIGKILL) and replaced by pid " + worker.pid();
    }

    /** Replies recorded and rejected so far, for the run's summary. */
    String replyCounts() {
        StringBuilder sb = new StringBuilder();
        for (dev.sas.core.CompletionOutcome o : dev.sas.core.CompletionOutcome.values()) {
            long n = replies == null ? 0 : replies.count(o);
            if (n > 0) {
                sb.append(sb.isEmpty() ? "" : ", ").append(n).append(' ').append(o);
            }
        }
        return sb.isEmpty() ? "no replies" : sb.toString();
    }

    @Override
    public void close() throws InterruptedException {
        if (replies != null) {
            replies.close();
        }
        if (worker != null) {
            worker.close();
        }
        try (Channel ch = rabbit.openChannel()) {
            ch.queueDelete(agent.requestQueue());
            ch.queueDelete(agent.replyQueue());
        } catch (IOException | java.util.concurrent.TimeoutException | RuntimeException e) {
            // the broker is gone; the run's queues stay behind
        }
        agent.close();
        rabbit.close();
    }
}
