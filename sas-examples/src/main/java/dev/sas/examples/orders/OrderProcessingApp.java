package dev.sas.examples.orders;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Runs the order-processing example from the command line and exits non-zero if a ledger check
 * fails. {@code mvn -q -pl sas-examples -am compile exec:java -Dexec.args="--orders 50 --crash"};
 * {@code --help} lists the options. With {@code --console} (or {@code -Dsas.console=true}) it keeps
 * running after the summary, serving the operator console, until Ctrl-C.
 */
public final class OrderProcessingApp {

    private OrderProcessingApp() {
    }

    /**
     * Entry point.
     *
     * @throws Exception if the run could not be set up
     */
    public static void main(String[] args) throws Exception {
        if (args.length == 1 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.out.println(RunConfig.USAGE);
            return;
        }
        RunConfig config;
        try {
            config = RunConfig.parse(withConsoleProperty(args));
        } catch (IllegalArgumentException e) {
            System.err.println(e.getMessage());
            System.exit(2);
            return;
        }
        Path dir = config.dir() != null ? Files.createDirectories(config.dir()) : Files.createTempDirectory("sas-orders-");
        config = config.withDir(dir);
        if (!config.verbose()) {
            // before the first logger is created: the library's logs go to a file, the console shows progress
            System.setProperty("org.slf4j.simpleLogger.logFile", dir.resolve("sas.log").toString());
            System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
        }
        RunSummary summary = OrderRun.run(config, System.out);
        if (config.consolePort() == RunConfig.NO_CONSOLE) {
            // with the console, the run printed its summary before serving it
            System.out.println();
            System.out.print(summary.table());
            System.out.println("operator console: run with --console (or -Dsas.console=true) to browse these tasks"
                    + " in a browser after the run");
        }
        System.exit(summary.ok() ? 0 : 1);
    }

    /** {@code -Dsas.console=true|PORT} (handy under {@code mvn exec:java}) as the {@code --console} option. */
    private static String[] withConsoleProperty(String[] args) {
        String property = System.getProperty("sas.console");
        if (property == null || property.isBlank() || property.equals("false")) {
            return args;
        }
        String[] all = java.util.Arrays.copyOf(args, args.length + 1);
        all[args.length] = property.equals("true") ? "--console" : "--console=" + property;
        return all;
    }
}
