package dev.sas.rabbitmq.internal;

import com.rabbitmq.client.AMQP;
import com.rabbitmq.client.Channel;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.Date;
import java.util.HashMap;
import java.util.Map;

/**
 * The agent transport's message format (documented in docs/rabbitmq.md): header names, the request
 * and reply properties, reading them back, and the quorum queues both sides declare identically.
 * Stateless.
 */
public final class AgentMessages {
    /** Header: the step's idempotency key, the same for every attempt. */
    public static final String IDEMPOTENCY_KEY = "sas-idempotency-key";
    /** Header: the attempt's deadline, epoch milliseconds. */
    public static final String COMPLETE_BY = "sas-complete-by";
    /** Header: the reply token the reply must carry. */
    public static final String REPLY_TOKEN = "sas-reply-token";
    /** Header: the task id. */
    public static final String TASK_ID = "sas-task-id";
    /** Header: the task's business key. */
    public static final String BUSINESS_KEY = "sas-business-key";
    /** Header: the workflow name. */
    public static final String WORKFLOW = "sas-workflow";
    /** Header: the step name. */
    public static final String STEP = "sas-step";
    /** Header: the step index. */
    public static final String STEP_INDEX = "sas-step-index";
    /** Header: the attempt, from 1. */
    public static final String ATTEMPT = "sas-attempt";
    /** Header: the agent's name. */
    public static final String AGENT = "sas-agent";
    /** Header of a reply: {@code ok} or {@code error}. */
    public static final String OUTCOME = "sas-outcome";
    /** Header of an error reply: whether the step may retry. */
    public static final String RETRYABLE = "sas-retryable";
    /** Message type of a request. */
    public static final String TYPE_REQUEST = "sas-agent-request";
    /** Header of an ok reply whose output is null (the body is then empty). */
    public static final String NULL_OUTPUT = "sas-null-output";
    /** Outcome of a successful reply. */
    public static final String OK = "ok";
    /** Outcome of a failed reply. */
    public static final String ERROR = "error";

    private AgentMessages() {
    }

    /** Declares the durable quorum queue {@code name} (idempotent with the same arguments). */
    public static void declareQuorumQueue(Channel channel, String name) throws IOException {
        channel.queueDeclare(name, true, false, false, Map.of("x-queue-type", "quorum"));
    }

    /** What a request carries besides its payload. */
    public record RequestHeaders(String agent, String replyToken, String idempotencyKey, Instant completeBy,
            String taskId, String businessKey, String workflow, String step, int stepIndex, int attempt) {
    }

    /** The properties of a persistent request message answered on {@code replyTo}. */
    public static AMQP.BasicProperties request(RequestHeaders h, String replyTo, Instant now) {
        Map<String, Object> headers = new HashMap<>();
        headers.put(AGENT, h.agent());
        headers.put(REPLY_TOKEN, h.replyToken());
        headers.put(IDEMPOTENCY_KEY, h.idempotencyKey());
        headers.put(COMPLETE_BY, h.completeBy().toEpochMilli());
        headers.put(TASK_ID, h.taskId());
        if (h.businessKey() != null) {
            headers.put(BUSINESS_KEY, h.businessKey());
        }
        headers.put(WORKFLOW, h.workflow());
        headers.put(STEP, h.step());
        headers.put(STEP_INDEX, h.stepIndex());
        headers.put(ATTEMPT, h.attempt());
        return persistentText(headers, now)
                .messageId(h.replyToken())
                .correlationId(h.replyToken())
                .replyTo(replyTo)
                .type(TYPE_REQUEST)
                .build();
    }

    /**
     * The headers of a request message.
     *
     * @throws IllegalArgumentException naming the header that is missing or malformed
     */
    public static RequestHeaders readRequest(AMQP.BasicProperties props) {
        Map<String, Object> h = props.getHeaders() == null ? Map.of() : props.getHeaders();
        return new RequestHeaders(text(h, AGENT, false), text(h, REPLY_TOKEN, true), text(h, IDEMPOTENCY_KEY, true),
                Instant.ofEpochMilli(number(h, COMPLETE_BY)), text(h, TASK_ID, true), text(h, BUSINESS_KEY, false),
                text(h, WORKFLOW, false), text(h, STEP, false), (int) number(h, STEP_INDEX), (int) number(h, ATTEMPT));
    }

    /** A reply: the token and either the encoded output (null for a null output) or an error. */
    public record Reply(String replyToken, boolean ok, String text, boolean retryable) {
    }

    /** The properties of a persistent reply to the request {@code request}. */
    public static AMQP.BasicProperties reply(RequestHeaders request, boolean ok, boolean retryable, boolean nullOutput,
            Instant now) {
        Map<String, Object> headers = new HashMap<>();
        if (nullOutput) {
            headers.put(NULL_OUTPUT, true);
        }
        headers.put(REPLY_TOKEN, request.replyToken());
        headers.put(OUTCOME, ok ? OK : ERROR);
        headers.put(RETRYABLE, retryable);
        headers.put(IDEMPOTENCY_KEY, request.idempotencyKey());
        headers.put(TASK_ID, request.taskId());
        if (request.step() != null) {
            headers.put(STEP, request.step());
        }
        headers.put(ATTEMPT, request.attempt());
        return persistentText(headers, now)
                .correlationId(request.replyToken())
                .type(ok ? OK : ERROR)
                .build();
    }

    /** The properties requests and replies share: persistent UTF-8 text with these headers, sent {@code now}. */
    private static AMQP.BasicProperties.Builder persistentText(Map<String, Object> headers, Instant now) {
        return new AMQP.BasicProperties.Builder()
                .contentType("text/plain")
                .contentEncoding("utf-8")
                .deliveryMode(2)
                .timestamp(Date.from(now))
                .headers(headers);
    }

    /**
     * The reply in a message.
     *
     * @throws IllegalArgumentException naming the header that is missing or malformed
     */
    public static Reply readReply(AMQP.BasicProperties props, byte[] body) {
        Map<String, Object> h = props.getHeaders() == null ? Map.of() : props.getHeaders();
        String outcome = text(h, OUTCOME, true);
        if (!outcome.equals(OK) && !outcome.equals(ERROR)) {
            throw new IllegalArgumentException("header " + OUTCOME + " must be '" + OK + "' or '" + ERROR + "', was '"
                    + outcome + "'");
        }
        Object retryable = h.get(RETRYABLE);
        boolean nullOutput = Boolean.TRUE.equals(h.get(NULL_OUTPUT));
        return new Reply(text(h, REPLY_TOKEN, true), outcome.equals(OK),
                nullOutput ? null : body == null ? "" : new String(body, StandardCharsets.UTF_8),
                !(retryable instanceof Boolean b) || b);
    }

    private static String text(Map<String, Object> h, String name, boolean required) {
        Object v = h.get(name);
        if (v == null) {
            if (required) {
                throw new IllegalArgumentException("header " + name + " is missing: not an SAS agent message");
            }
            return null;
        }
        String s = v.toString(); // LongString or String
        if (required && s.isBlank()) {
            throw new IllegalArgumentException("header " + name + " is blank: not an SAS agent message");
        }
        return s;
    }

    private static long number(Map<String, Object> h, String name) {
        Object v = h.get(name);
        if (v instanceof Number n) {
            return n.longValue();
        }
        throw new IllegalArgumentException("header " + name + " must be a number, was "
                + (v == null ? "missing" : v.getClass().getSimpleName()) + ": not an SAS agent message");
    }
}
