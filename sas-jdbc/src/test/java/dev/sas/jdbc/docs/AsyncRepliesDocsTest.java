package dev.sas.jdbc.docs;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import dev.sas.core.Codec;
import dev.sas.core.CompletionOutcome;
import dev.sas.core.CompletionTokenKeys;
import dev.sas.core.SasClient;
import dev.sas.core.SasRuntime;
import dev.sas.core.TaskHandle;
import dev.sas.core.TaskResult;
import dev.sas.core.TaskStatus;
import dev.sas.core.Workflow;
import dev.sas.jdbc.JdbcStateStore;
import java.time.Duration;
import java.util.Base64;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.Test;

/** The human-approval step shown in docs/async-replies.md, compiled and run. */
class AsyncRepliesDocsTest {

    /** Stands for the mail server: the approval links sent, by order. */
    static final class Mailer {
        final Map<String, String> links = new ConcurrentHashMap<>();

        void send(String to, String subject, String link) {
            links.put(subject, link);
        }
    }

    private final Mailer mailer = new Mailer();

    // tag::keys[]
    /** The same keys on every node and client: the secret from the environment, never from code. */
    static CompletionTokenKeys completionTokenKeys(Map<String, String> env) {
        return CompletionTokenKeys.builder()
                .currentKey("2026-11", Base64.getDecoder().decode(env.get("SAS_REPLY_KEY_2026_11")))
                .build();
    }
    // end::keys[]

    /** Stands for the process environment; a fixed key for the test. */
    private static final Map<String, String> ENV = Map.of("SAS_REPLY_KEY_2026_11",
            "q0Zg2vC3Zb0m3xw0l4bK7XQe1m2H9yYV0m9m3Q8mQxU=");

    // tag::workflow[]
    Workflow<String> orders = Workflow.builder("large-orders", Codec.string())
            .step("approve", s -> s
                    .awaitCompletion((ctx, replyToken) -> mailer.send("approvers@example.com",
                            "Approve order " + ctx.businessKey(),
                            "https://shop.example.com/approvals/" + replyToken))
                    .completeWithin(Duration.ofDays(7)))   // no thread waits meanwhile
            .step("ship", s -> s.execute(ctx -> "shipped, " + ctx.output("approve").orElseThrow()))
            .build();
    // end::workflow[]

    // tag::webhook[]
    /** The web tier's handler of POST /approvals/{token}: it holds only a client. */
    static String onApproval(SasClient client, String token, String approver, boolean approved) {
        CompletionOutcome outcome = approved
                ? client.stepCompletion().complete(token, "approved by " + approver)
                : client.stepCompletion().fail(token, "rejected by " + approver, false);   // false: do not retry
        return switch (outcome) {
            case COMPLETED, FAILED -> "thank you";
            case ALREADY_COMPLETED -> "already answered";
            case LATE -> "this approval has expired";
            case STALE, NOT_FOUND -> "this link is no longer valid";
            case INVALID_TOKEN -> "this is not a link we sent";   // forged or altered: logged, counted
        };
    }
    // end::webhook[]

    @Test
    void an_order_waits_for_its_approval_and_ships_once_approved() {
        try (JdbcStateStore store = JdbcStateStore.builder().url("jdbc:h2:mem:async-docs;DB_CLOSE_DELAY=-1").build();
             SasRuntime runtime = SasRuntime.builder().stateStore(store).workflow(orders)
                     .completionTokenKeys(completionTokenKeys(ENV)).build().start()) {
            TaskHandle order = runtime.client().submit(orders, "order-42", "a car");
            await().atMost(Duration.ofSeconds(30))
                    .until(() -> order.info().status() == TaskStatus.AWAITING_COMPLETION);
            // the scheduler gives the slot back just after the awaiting state commits, on its own thread
            await().atMost(Duration.ofSeconds(30)).until(() -> runtime.inFlight() == 0);
            String link = mailer.links.get("Approve order order-42");
            String token = link.substring(link.lastIndexOf('/') + 1);

            SasClient webTier = SasClient.builder().stateStore(store).workflow(orders)
                    .completionTokenKeys(completionTokenKeys(ENV)).build();
            String otherOrder = token.substring(0, token.indexOf('.') - 2) + "xx" + token.substring(token.indexOf('.'));
            assertThat(onApproval(webTier, otherOrder, "mallory", true)).isEqualTo("this is not a link we sent");
            assertThat(onApproval(webTier, token, "ann", true)).isEqualTo("thank you");
            assertThat(onApproval(webTier, token, "bob", true)).isEqualTo("already answered");

            TaskResult result = order.await(Duration.ofSeconds(30));
            assertThat(result.status()).isEqualTo(TaskStatus.PROCESSED);
            assertThat(result.info().step("ship").output()).isEqualTo("shipped, approved by ann");
        }
    }
}
