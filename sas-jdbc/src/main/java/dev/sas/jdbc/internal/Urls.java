package dev.sas.jdbc.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Makes JDBC URLs safe to log and to put into exception messages. Not API.
 *
 * <p>Where a secret ends follows how the drivers split a URL: PostgreSQL and MariaDB split
 * their query string at {@code &} only, so a password there may contain {@code ;} (and
 * {@code @}); H2 splits its settings at {@code ;}, so an H2 password may contain {@code &}. In
 * {@code //user:password@host} the password runs to the last {@code @} before the path, so it may
 * contain {@code @}, {@code :}, {@code ;}, {@code &} and {@code ?}. When in doubt, more is
 * redacted, never less.
 */
public final class Urls {

    // any key ending in password/passwd/pwd: password, sslpassword, trustStorePassword, PWD, ...
    private static final Pattern QUERY_PASSWORD = Pattern.compile("(?i)(password|passwd|pwd)=[^&]*");
    private static final Pattern H2_PASSWORD = Pattern.compile("(?i)(password|passwd|pwd)=[^;]*");
    private static final Pattern USER_INFO_START = Pattern.compile("//([^/@:]*):");

    private Urls() {
    }

    /**
     * The secrets in a URL: values of password parameters and the password of
     * {@code user:password@}. Where it is ambiguous, every candidate is returned, longest first.
     */
    public static List<String> secrets(String url) {
        List<String> out = new ArrayList<>();
        if (url == null) {
            return out;
        }
        Matcher m = passwordParam(url).matcher(url);
        while (m.find()) {
            String v = m.group().substring(m.group().indexOf('=') + 1);
            if (!v.isEmpty()) {
                out.add(v);
            }
        }
        Matcher u = USER_INFO_START.matcher(url);
        if (u.find()) {
            int from = u.end();
            int end = authorityEnd(url, from);
            for (int at = url.indexOf('@', from); at >= 0 && at < end; at = url.indexOf('@', at + 1)) {
                if (at > from) {
                    out.add(url.substring(from, at));
                }
            }
        }
        out.sort(Comparator.comparingInt(String::length).reversed());
        return out;
    }

    /** {@code text} with every secret replaced by ***, longest secret first. */
    public static String scrub(String text, Collection<String> secrets) {
        List<String> sorted = new ArrayList<>(secrets);
        sorted.sort(Comparator.comparingInt(String::length).reversed());
        String s = text;
        for (String secret : sorted) {
            if (s != null && !secret.isEmpty()) {
                s = s.replace(secret, "***");
            }
        }
        return s;
    }

    /** True if any message in the cause chain of {@code e} contains a secret. */
    public static boolean leaks(Throwable e, Collection<String> secrets) {
        for (Throwable c = e; c != null; c = c.getCause()) {
            String msg = String.valueOf(c.getMessage());
            for (String secret : secrets) {
                if (!secret.isEmpty() && msg.contains(secret)) {
                    return true;
                }
            }
            if (c.getCause() == c) {
                break;
            }
        }
        return false;
    }

    /**
     * The URL (or a message quoting one) with every password parameter and any
     * {@code user:password@} secret replaced by ***.
     */
    public static String redact(String url) {
        if (url == null) {
            return null;
        }
        String s = passwordParam(url).matcher(url).replaceAll("$1=***");
        Matcher u = USER_INFO_START.matcher(s);
        if (u.find()) {
            int from = u.end();
            int at = s.lastIndexOf('@', authorityEnd(s, from) - 1);
            if (at >= from) {
                s = s.substring(0, from) + "***" + s.substring(at);
            }
        }
        return s;
    }

    private static Pattern passwordParam(String url) {
        return url.toLowerCase(Locale.ROOT).contains("jdbc:h2:") ? H2_PASSWORD : QUERY_PASSWORD;
    }

    /**
     * Where the authority that starts at {@code from} ends: at the next {@code /} (one in a
     * password must be percent-encoded, as in any URL), else at the end of the text.
     */
    private static int authorityEnd(String url, int from) {
        int slash = url.indexOf('/', from);
        return slash < 0 ? url.length() : slash;
    }
}
