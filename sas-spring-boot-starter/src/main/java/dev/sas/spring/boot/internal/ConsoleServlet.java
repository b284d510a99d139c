package dev.sas.spring.boot.internal;

import dev.sas.console.ConsoleRequest;
import dev.sas.console.ConsoleResponse;
import dev.sas.console.SasConsole;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.security.Principal;
import java.util.Collections;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;

/**
 * The console in the application's servlet server, mapped to {@code <path>/*}. A POST from a
 * signed-in principal holding the operator role ({@link HttpServletRequest#isUserInRole}; with
 * Spring Security an authority {@code ROLE_<role>}) acts without the token: the servlet adds the
 * console's token on its behalf. Any other request is the console's to judge (the token in its
 * header, or read-only). The audit log names the principal, and so does every action's event
 * ({@link #operator}: the principal's name, read on the request's thread, never from a header the
 * client could forge). Not API. Thread-safe.
 */
public final class ConsoleServlet extends HttpServlet {

    private static final long serialVersionUID = 1L;
    private static final String TOKEN_HEADER = SasConsole.TOKEN_HEADER.toLowerCase(Locale.ROOT);

    /** The principal of the request this thread serves, while the console handles it. */
    private static final ThreadLocal<String> PRINCIPAL = new ThreadLocal<>();

    private final transient SasConsole console;
    private final String token;
    private final String operatorRole;

    /**
     * @param console the console
     * @param token the console's action token, or null for a read-only console
     * @param operatorRole the role whose holders act without the token, or null
     */
    public ConsoleServlet(SasConsole console, String token, String operatorRole) {
        this.console = console;
        this.token = token;
        this.operatorRole = operatorRole;
    }

    @Override
    protected void service(HttpServletRequest req, HttpServletResponse resp) throws IOException {
        // the raw (undecoded) path below the servlet's mapping
        String path = req.getRequestURI().substring(req.getContextPath().length() + req.getServletPath().length());
        if (path.isEmpty()) {
            resp.sendRedirect(req.getRequestURI() + "/"); // the page's links are relative
            return;
        }
        Map<String, String> headers = new HashMap<>();
        for (String name : Collections.list(req.getHeaderNames())) {
            headers.put(name.toLowerCase(Locale.ROOT), req.getHeader(name));
        }
        Principal principal = req.getUserPrincipal();
        if (token != null && operatorRole != null && principal != null && req.isUserInRole(operatorRole)) {
            headers.put(TOKEN_HEADER, token);
        }
        String who = principal == null ? req.getRemoteAddr() : principal.getName() + "@" + req.getRemoteAddr();
        ConsoleResponse r;
        PRINCIPAL.set(principal == null ? null : principal.getName());
        try {
            r = console.handle(new ConsoleRequest(req.getMethod(), path, req.getQueryString(), headers, who));
        } finally {
            PRINCIPAL.remove();
        }
        resp.setStatus(r.status());
        r.headers().forEach(resp::setHeader);
        resp.getOutputStream().write(r.body());
    }

    /**
     * The operator a console action is recorded under: the signed-in principal of the request this
     * thread serves, or null (the console then records {@code console}).
     *
     * @param request the console's request (unused: the principal comes from the servlet request)
     * @return the principal's name, or null
     */
    public static String operator(ConsoleRequest request) {
        return PRINCIPAL.get();
    }
}
