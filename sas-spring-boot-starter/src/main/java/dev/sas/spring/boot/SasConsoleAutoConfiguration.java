package dev.sas.spring.boot;

import dev.sas.console.SasConsole;
import dev.sas.core.SasClient;
import dev.sas.spring.boot.internal.ConsoleServlet;
import java.security.SecureRandom;
import java.util.Base64;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.web.servlet.ServletRegistrationBean;
import org.springframework.context.annotation.Bean;

/**
 * With {@code sas.console.enabled=true}, {@code sas-console} on the class path and a servlet web
 * application, the operator console is mounted under {@code sas.console.path} (default
 * {@code /sas}) in the application's own server, on Spring Boot 4 and 3. Reading needs nothing
 * from the console itself (protect the path with the application's security if it must be
 * private). Actions (resubmit, cancel) need either a signed-in principal holding
 * {@code sas.console.operator-role} (with Spring Security the authority {@code ROLE_SAS_OPERATOR}
 * by default), or {@code sas.console.token} in the {@code X-SAS-Console-Token} header.
 */
@AutoConfiguration(after = SasAutoConfiguration.class)
@ConditionalOnClass(name = {"dev.sas.console.SasConsole", "jakarta.servlet.http.HttpServlet"})
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnProperty(prefix = "sas.console", name = "enabled", havingValue = "true")
@ConditionalOnBean(SasClient.class)
@EnableConfigurationProperties(SasConsoleProperties.class)
public class SasConsoleAutoConfiguration {

    /** Creates the auto-configuration; Spring calls it. */
    public SasConsoleAutoConfiguration() {
    }

    /**
     * The console's servlet under {@code sas.console.path}.
     *
     * @param client the client the console reads and acts through
     * @param properties the {@code sas.console.*} properties
     * @return the registration
     * @throws IllegalStateException if the path is not of the form {@code /name[/name...]}
     */
    @Bean
    @ConditionalOnMissingBean(name = "sasConsoleServlet")
    ServletRegistrationBean<ConsoleServlet> sasConsoleServlet(SasClient client, SasConsoleProperties properties) {
        String path = properties.getPath();
        if (path == null || !path.matches("(/[A-Za-z0-9._~-]+)+")) {
            throw new IllegalStateException("sas.console.path must be a path such as /sas or /ops/sas (no trailing"
                    + " '/', no wildcards), was '" + path + "'");
        }
        String role = properties.getOperatorRole() == null || properties.getOperatorRole().isBlank() ? null
                : properties.getOperatorRole().trim();
        // Operators holding the role act with a token of the servlet's own when none is configured.
        String token = properties.getToken() != null ? properties.getToken() : role != null ? randomToken() : null;
        SasConsole.Builder builder = SasConsole.builder().client(client).showPayloads(properties.isShowPayloads())
                .operator(ConsoleServlet::operator);
        try {
            builder.actionToken(token).title(properties.getTitle());
            properties.getAllowedHosts().forEach(builder::allowedHost);
        } catch (IllegalArgumentException | NullPointerException e) {
            throw new IllegalStateException("sas.console.token, sas.console.title or sas.console.allowed-hosts is not"
                    + " usable: " + e.getMessage(), e);
        }
        SasConsole console = builder.build();
        ServletRegistrationBean<ConsoleServlet> registration =
                new ServletRegistrationBean<>(new ConsoleServlet(console, token, role), path + "/*");
        registration.setName("sasConsole");
        return registration;
    }

    private static String randomToken() {
        byte[] bytes = new byte[32];
        new SecureRandom().nextBytes(bytes);
        return Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
