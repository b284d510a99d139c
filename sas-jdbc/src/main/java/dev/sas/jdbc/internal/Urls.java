package dev.sas.jdbc.internal;

import java.util.regex.Pattern;

/** Makes JDBC URLs safe to log and to put into exception messages. Not API. */
public final class Urls {

    private static final Pattern PASSWORD_PARAM =
            Pattern.compile("(?i)(password|passwd|pwd)=[^&;]*");
    private static final Pattern USER_INFO = Pattern.compile("//([^/@:]*):[^/@]*@");

    private Urls() {
    }

    /** The secrets in a URL: values of password parameters and the password of {@code user:password@}. */
    public static java.util.List<String> secrets(String url) {
        java.util.List<String> out = new java.util.ArrayList<>();
        if (url == null) {
            return out;
        }
        java.util.regex.Matcher m = PASSWORD_PARAM.matcher(url);
        while (m.find()) {
            String v = m.group().substring(m.group().indexOf('=') + 1);
            if (!v.isEmpty()) {
                out.add(v);
            }
        }
        java.util.regex.Matcher u = Pattern.compile("//[^/@:]*:([^/@]*)@").matcher(url);
        if (u.find() && !u.group(1).isEmpty()) {
            out.add(u.group(1));
        }
        return out;
    }

    /** {@code text} with every secret replaced by ***. */
    public static String scrub(String text, java.util.Collection<String> secrets) {
        String s = text;
        for (String secret : secrets) {
            if (s != null && !secret.isEmpty()) {
                s = s.replace(secret, "***");
            }
        }
        return s;
    }

    /** True if any message in the cause chain of {@code e} contains a secret. */
    public static boolean leaks(Throwable e, java.util.Collection<String> secrets) {
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

    /** The URL with any {@code password=} parameter and any {@code user:password@} secret replaced by ***. */
    public static String redact(String url) {
        if (url == null) {
            return null;
        }
        String s = PASSWORD_PARAM.matcher(url).replaceAll("$1=***");
        return USER_INFO.matcher(s).replaceAll("//$1:***@");
    }
}
