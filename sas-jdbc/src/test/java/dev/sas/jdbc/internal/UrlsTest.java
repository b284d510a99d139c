package dev.sas.jdbc.internal;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.junit.jupiter.api.Test;

/** Every URL form the drivers accept, with passwords holding the characters that used to end a match. */
class UrlsTest {

    static List<Arguments> urls() {
        return List.of(
                // PostgreSQL and MariaDB split the query at '&' only: ';' and '@' belong to the password
                Arguments.of("jdbc:postgresql://127.0.0.1:5432/db?user=app&password=s3;cr@t:x&ssl=false", "s3;cr@t:x",
                        "jdbc:postgresql://127.0.0.1:5432/db?user=app&password=***&ssl=false"),
                Arguments.of("jdbc:postgresql://127.0.0.1/db?password=ends;with;semicolons;", "ends;with;semicolons;",
                        "jdbc:postgresql://127.0.0.1/db?password=***"),
                Arguments.of("jdbc:postgresql://127.0.0.1/db?sslpassword=key;pass&password=p%26w", "key;pass",
                        "jdbc:postgresql://127.0.0.1/db?sslpassword=***&password=***"),
                Arguments.of("jdbc:mariadb://127.0.0.1:3306/db?user=root&password=a;b@c?d", "a;b@c?d",
                        "jdbc:mariadb://127.0.0.1:3306/db?user=root&password=***"),
                Arguments.of("jdbc:mysql://127.0.0.1/db?PWD=x;y&useSSL=false", "x;y",
                        "jdbc:mysql://127.0.0.1/db?PWD=***&useSSL=false"),
                // user:password@host: the password runs to the last '@' of the authority
                Arguments.of("jdbc:mariadb://root:p@ss;w&rd@127.0.0.1:3306/db", "p@ss;w&rd",
                        "jdbc:mariadb://root:***@127.0.0.1:3306/db"),
                Arguments.of("jdbc:mysql://root:a:b?c@127.0.0.1,127.0.0.2/db?user=x", "a:b?c",
                        "jdbc:mysql://root:***@127.0.0.1,127.0.0.2/db?user=x"),
                // H2 splits at ';': '&' and '@' belong to the password
                Arguments.of("jdbc:h2:file:./data/sas;USER=sa;PASSWORD=a&b@c;LOCK_TIMEOUT=10000", "a&b@c",
                        "jdbc:h2:file:./data/sas;USER=sa;PASSWORD=***;LOCK_TIMEOUT=10000"),
                Arguments.of("jdbc:h2:tcp://127.0.0.1/~/sas;password=x&y", "x&y",
                        "jdbc:h2:tcp://127.0.0.1/~/sas;password=***"));
    }

    @ParameterizedTest
    @MethodSource("urls")
    void redact_hides_the_whole_password(String url, String password, String expected) {
        String redacted = Urls.redact(url);

        assertThat(redacted).isEqualTo(expected).doesNotContain(password);
        assertThat(Urls.secrets(url)).contains(password);
        assertThat(Urls.scrub("driver said: cannot log in with " + password + " to " + url, Urls.secrets(url)))
                .doesNotContain(password);
    }

    @Test
    void a_message_quoting_a_url_is_redacted_too() {
        String message = "FATAL: connection to jdbc:postgresql://127.0.0.1/db?password=a;b;c failed";

        assertThat(Urls.redact(message)).doesNotContain("a;b;c").doesNotContain(";b").doesNotContain(";c");
    }

    @Test
    void a_url_without_secrets_is_unchanged() {
        String url = "jdbc:postgresql://127.0.0.1:5432/db?user=app&ApplicationName=x;y";

        assertThat(Urls.redact(url)).isEqualTo(url);
        assertThat(Urls.secrets(url)).isEmpty();
    }

    @Test
    void a_user_info_secret_is_found_for_every_at_sign_it_may_end_at() {
        assertThat(Urls.secrets("jdbc:mariadb://u:p@q@127.0.0.1/db")).containsExactly("p@q", "p");
    }
}
