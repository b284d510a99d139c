package dev.sas.console.docs;

import dev.sas.console.ConsoleRequest;
import dev.sas.console.ConsoleResponse;
import dev.sas.console.SasConsole;
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;

// docs:servlet
/** The console in a servlet container, mapped to a path such as {@code /ops/sas/*}. */
public class SasConsoleServlet extends HttpServlet {
    private static final long serialVersionUID = 1L;
    private final transient SasConsole console;

    public SasConsoleServlet(SasConsole console) {
        this.console = console;
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
            headers.put(name, req.getHeader(name));
        }
        ConsoleResponse r = console.handle(
                new ConsoleRequest(req.getMethod(), path, req.getQueryString(), headers, req.getRemoteAddr()));
        resp.setStatus(r.status());
        r.headers().forEach(resp::setHeader);
        resp.getOutputStream().write(r.body());
    }
}
// docs:end
