package dev.sas.core.unit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.sas.core.CompletionTokenKeys;
import java.util.Arrays;
import org.junit.jupiter.api.Test;

class CompletionTokenKeysTest {

    private static byte[] random(int length, int seed) {
        byte[] key = new byte[length];
        for (int i = 0; i < length; i++) {
            key[i] = (byte) (seed * 31 + i * 7);
        }
        return key;
    }

    @Test
    void keys_shorter_than_32_bytes_or_without_variety_are_refused_naming_the_setting() {
        assertThatThrownBy(() -> CompletionTokenKeys.builder().currentKey("k1", random(31, 1)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("currentKey 'k1'")
                .hasMessageContaining("at least 32 bytes, was 31");
        assertThatThrownBy(() -> CompletionTokenKeys.builder().previousKey("k0", new byte[16]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("previousKey 'k0'");
        assertThatThrownBy(() -> CompletionTokenKeys.builder().currentKey("k1", new byte[32]))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("one byte repeated");
        assertThatThrownBy(() -> CompletionTokenKeys.builder().currentKey("k1", null))
                .isInstanceOf(NullPointerException.class).hasMessageContaining("currentKey secret");
    }

    @Test
    void key_ids_must_be_short_and_plain() {
        for (String bad : new String[] {"", "a:b", "a b", "x".repeat(33), "k\u00e9"}) {
            assertThatThrownBy(() -> CompletionTokenKeys.builder().currentKey(bad, random(32, 1)))
                    .as(bad).isInstanceOf(IllegalArgumentException.class).hasMessageContaining("currentKey id");
        }
        assertThat(CompletionTokenKeys.builder().currentKey("2026-11_a.b", random(32, 1)).build().currentKeyId())
                .isEqualTo("2026-11_a.b");
    }

    @Test
    void a_current_key_is_required_and_ids_name_one_key_each() {
        assertThatThrownBy(() -> CompletionTokenKeys.builder().previousKey("k0", random(32, 1)).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("current key is required");
        assertThatThrownBy(() -> CompletionTokenKeys.builder().currentKey("k1", random(32, 1))
                .previousKey("k1", random(32, 2)).build())
                .isInstanceOf(IllegalStateException.class).hasMessageContaining("previousKey 'k1'");
        assertThatThrownBy(() -> CompletionTokenKeys.builder().previousKey("k0", random(32, 1))
                .previousKey("k0", random(32, 2)))
                .isInstanceOf(IllegalArgumentException.class).hasMessageContaining("already given");
    }

    @Test
    void built_keys_are_copies_and_never_printed() {
        byte[] secret = random(32, 5);
        CompletionTokenKeys.Builder builder = CompletionTokenKeys.builder().currentKey("k2", secret).previousKey("k1",
                random(40, 6));
        CompletionTokenKeys keys = builder.build();
        Arrays.fill(secret, (byte) 0);
        builder.previousKey("k0", random(32, 7));

        assertThat(keys.acceptedKeyIds()).containsExactly("k2", "k1");
        assertThat(keys.acceptsUnsignedTokens()).isFalse();
        assertThat(keys.toString()).contains("k2", "k1").doesNotContain(Arrays.toString(random(32, 5)))
                .doesNotContain(java.util.Base64.getEncoder().encodeToString(random(32, 5)));
    }
}
