package dev.sas.cli;

import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * The {@code sas} command: look at and act on SAS tasks in a database, from a shell.
 *
 * <pre>
 * java -jar sas-cli.jar tasks list --url jdbc:postgresql://db/app?user=ops --status ERROR
 * java -jar sas-cli.jar tasks show 0f6c... --url ...
 * java -jar sas-cli.jar tasks resubmit 0f6c... --url ...
 * java -jar sas-cli.jar tasks resubmit --all-errors --workflow orders --url ...
 * java -jar sas-cli.jar tasks cancel --status error --error-contains "card declined" --reason "refunded" --url ...
 * java -jar sas-cli.jar stats --url ... --json
 * java -jar sas-cli.jar agents --url ...
 * </pre>
 *
 * <p>Enum options take any case. With {@code --json}, errors are a JSON document on the output too
 * ({@code {"error": "...", "exitCode": N}}).
 *
 * <p>Exit status: 0 done; 1 a task was not found or an action was refused; 2 bad usage; 3 the
 * database could not be read or written.
 */
@Command(name = "sas", mixinStandardHelpOptions = true, versionProvider = SasCli.Version.class,
        description = "Look at and act on SAS tasks in their database.",
        subcommands = {TasksCommand.class, StatsCommand.class, AgentsCommand.class, SchedulesCommand.class,
            CommandLine.HelpCommand.class},
        footer = {"", "Exit status: 0 done, 1 a task was not found or an action refused, 2 bad usage,"
                + " 3 the database failed.",
            "The JDBC URL may come from SAS_JDBC_URL and the password from SAS_JDBC_PASSWORD."})
public final class SasCli implements Runnable {

    /** A task was not found, or an action on it was refused. */
    static final int REFUSED = 1;
    /** The store could not be read or written. */
    static final int STORE_FAILED = 3;

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /**
     * Runs the command line.
     *
     * @param args the arguments
     */
    public static void main(String[] args) {
        if (System.getProperty("org.slf4j.simpleLogger.defaultLogLevel") == null) {
            // the library's INFO lines (pool started, clock offset) are not for a command's user
            System.setProperty("org.slf4j.simpleLogger.defaultLogLevel", "warn");
        }
        System.exit(commandLine(new PrintWriter(System.out, true), new PrintWriter(System.err, true)).execute(args));
    }

    /** The command line writing to {@code out} and {@code err}; tests call this. */
    static CommandLine commandLine(PrintWriter out, PrintWriter err) {
        CommandLine cl = new CommandLine(new SasCli());
        cl.setOut(out);
        cl.setErr(err);
        cl.setCaseInsensitiveEnumValuesAllowed(true);
        cl.setExecutionExceptionHandler((e, cmd, parsed) -> {
            int code = e instanceof dev.sas.core.StateStoreException || e instanceof StoreOptions.CannotOpen
                    ? STORE_FAILED : REFUSED;
            return Output.error(cmd, wantsJson(parsed), "error: " + e.getMessage(), code);
        });
        cl.setParameterExceptionHandler((e, args) -> {
            CommandLine cmd = e.getCommandLine();
            int code = cmd.getCommandSpec().exitCodeOnInvalidInput();
            if (List.of(args).contains("--json")) {
                return Output.error(cmd, true, e.getMessage(), code);
            }
            cmd.getErr().println(e.getMessage());
            if (!CommandLine.UnmatchedArgumentException.printSuggestions(e, cmd.getErr())) {
                cmd.usage(cmd.getErr());
            }
            return code;
        });
        return cl;
    }

    /** True if the command that ran was given {@code --json}. */
    private static boolean wantsJson(CommandLine.ParseResult parsed) {
        CommandLine.ParseResult p = parsed;
        while (p.subcommand() != null) {
            p = p.subcommand();
        }
        return p.hasMatchedOption("--json");
    }

    /** The version from the jar's manifest. */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = SasCli.class.getPackage().getImplementationVersion();
            return new String[] {"sas " + (v == null ? "(development build)" : v)};
        }
    }
}
