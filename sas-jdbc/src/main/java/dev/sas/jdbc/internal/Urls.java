package dev.sas.jdbc.internal;

import java.util.regex.Pattern;

/** Makes JDBC URLs safe to log and to put into exception messages. Not API. */
public final class Urls {

    private static final Pattern PASSWORD_PARAM =
            Pattern.compile("(?i)(password|passwd|pwd)=[^&;]*");
    private static final Pattern USER_INFO = Pattern.compile("//([^/@:]*):[^/@]*@");

    private Urls() {
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
