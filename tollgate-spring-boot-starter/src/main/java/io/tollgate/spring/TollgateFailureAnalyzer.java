package io.tollgate.spring;

import org.springframework.boot.diagnostics.AbstractFailureAnalyzer;
import org.springframework.boot.diagnostics.FailureAnalysis;

/**
 * Reports a start that failed on a bad {@code tollgate.*} property or {@link RateLimit} annotation as what
 * it is, rather than as a stack of bean creation errors.
 */
final class TollgateFailureAnalyzer extends AbstractFailureAnalyzer<InvalidTollgatePropertiesException> {

    @Override
    protected FailureAnalysis analyze(Throwable rootFailure, InvalidTollgatePropertiesException cause) {
        return new FailureAnalysis(
                "Tollgate cannot start: " + cause.getMessage(),
                "Correct the tollgate.* property or the @RateLimit annotation named above.",
                cause);
    }
}
