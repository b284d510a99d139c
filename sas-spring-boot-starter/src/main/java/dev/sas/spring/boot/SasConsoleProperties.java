package dev.sas.spring.boot;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * The {@code sas.console.*} properties: the operator console ({@code sas-console}) mounted in the
 * application's own servlet server. Bound by Spring; not thread-safe while binding, read-only after.
 */
@ConfigurationProperties(prefix = "sas.console")
public class SasConsoleProperties {

    /** The default path the console is mounted under. */
    public static final String DEFAULT_PATH = "/sas";
    /** The default role whose holders may act in the console without the token. */
    public static final String DEFAULT_OPERATOR_ROLE = "SAS_OPERATOR";

    /** Whether the console is mounted in the application's servlet server (needs sas-console on the class path). */
    private boolean enabled;
    /** The path the console is mounted under, e.g. /sas (the page at /sas/, its API at /sas/api/). */
    private String path = DEFAULT_PATH;
    /**
     * The operator token (at least 16 characters) that lets a request act (resubmit, cancel) in the
     * X-SAS-Console-Token header. Unset: only operators holding the operator role can act.
     */
    private String token;
    /**
     * The role (as in HttpServletRequest.isUserInRole, e.g. a Spring Security authority ROLE_SAS_OPERATOR)
     * whose signed-in holders may act without the token. Empty: only the token authorises actions.
     */
    private String operatorRole = DEFAULT_OPERATOR_ROLE;
    /** Whether step outputs (payloads) are shown. */
    private boolean showPayloads;
    /** The page's title. */
    private String title = "SAS";
    /**
     * Host names the console answers for besides {@code localhost} and IP addresses: the name the
     * application is served under ({@code ops.example.com}, any port, or {@code ops.example.com:8443}).
     * Any other {@code Host} is refused (DNS-rebinding defence).
     */
    private java.util.List<String> allowedHosts = new java.util.ArrayList<>();

    /** @return whether the console is mounted */
    public boolean isEnabled() {
        return enabled;
    }

    /** @param enabled whether the console is mounted */
    public void setEnabled(boolean enabled) {
        this.enabled = enabled;
    }

    /** @return the mount path */
    public String getPath() {
        return path;
    }

    /** @param path the mount path, starting with '/' */
    public void setPath(String path) {
        this.path = path;
    }

    /** @return the operator token, or null */
    public String getToken() {
        return token;
    }

    /** @param token the operator token */
    public void setToken(String token) {
        this.token = token;
    }

    /** @return the operator role, or empty for none */
    public String getOperatorRole() {
        return operatorRole;
    }

    /** @param operatorRole the operator role, or empty for none */
    public void setOperatorRole(String operatorRole) {
        this.operatorRole = operatorRole;
    }

    /** @return whether payloads are shown */
    public boolean isShowPayloads() {
        return showPayloads;
    }

    /** @param showPayloads whether payloads are shown */
    public void setShowPayloads(boolean showPayloads) {
        this.showPayloads = showPayloads;
    }

    /** @return the page's title */
    public String getTitle() {
        return title;
    }

    /** @param title the page's title */
    public void setTitle(String title) {
        this.title = title;
    }

    /** @return the host names the console answers for besides localhost and IP addresses */
    public java.util.List<String> getAllowedHosts() {
        return allowedHosts;
    }

    /** @param allowedHosts the host names the console answers for besides localhost and IP addresses */
    public void setAllowedHosts(java.util.List<String> allowedHosts) {
        this.allowedHosts = allowedHosts == null ? new java.util.ArrayList<>() : allowedHosts;
    }
}
