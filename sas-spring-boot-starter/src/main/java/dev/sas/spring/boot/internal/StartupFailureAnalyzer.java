package dev.sas.spring.boot.internal;

import dev.sas.spring.boot.SasStartupException;
import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Prints a {@link SasStartupException} as Spring Boot's "APPLICATION FAILED TO START" report
 * (description and action) instead of a stack trace. Registered in {@code META-INF/spring.factories}.
 * Not API.
 */
public final class StartupFailureAnalyzer extends AbstractFailureAnalyzer<SasStartupException> {

    /** Creates the analyzer; Spring Boot calls it. */
    public StartupFailureAnalyzer() {
    }

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, SasStartupException cause) {
        return new FailureAnalysis(cause.description(), cause.action(), cause);
    }
}
