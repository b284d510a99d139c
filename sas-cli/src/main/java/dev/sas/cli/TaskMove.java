package dev.sas.cli;

import dev.sas.core.SasClient;
import dev.sas.core.TaskId;
import dev.sas.core.VersionMoveException;
import dev.sas.core.Workflow;
import java.io.PrintWriter;
import java.util.Collection;
import java.util.Optional;
import java.util.function.Supplier;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code sas tasks move}: moves tasks to another version of their workflow. The CLI knows no
 * workflow definitions, so {@code --workflows} names a class on the class path that supplies them
 * (the new version with its {@code movesFrom} mapping).
 */
@Command(name = "move", mixinStandardHelpOptions = true,
        description = {"Move tasks to another version of their workflow, by id or by filters: each continues at"
                + " the step the new version's movesFrom mapping gives, its completed steps kept.",
            "Only PENDING, WAITING, PARKED and ERROR tasks that no node holds move. The new version's definition"
                + " comes from --workflows: run with your application on the class path, e.g."
                + " java -cp sas-cli.jar:app.jar dev.sas.cli.SasCli tasks move ..."})
final class TaskMove extends TaskActions.Base {

    @Option(names = "--to-version", paramLabel = "N", required = true, description = "the version to move to")
    int toVersion;

    @Option(names = "--workflows", paramLabel = "CLASS", required = true,
            description = "a class with a public no-argument constructor implementing"
                    + " Supplier<Collection<Workflow<?>>>: the workflows of your application")
    String workflowsClass;

    private SasClient mover;

    @Override
    String verb() {
        return "move";
    }

    @Override
    String pastTense() {
        return "moved";
    }

    @Override
    Optional<Integer> special(StoreOptions.Session s, PrintWriter out) {
        SasClient.Builder b = SasClient.builder().stateStore(s.store());
        workflows().forEach(b::workflow);
        mover = b.build();
        return Optional.empty();
    }

    private Collection<Workflow<?>> workflows() {
        CommandLine cl = spec.commandLine();
        Object supplier;
        try {
            supplier = Class.forName(workflowsClass, true, Thread.currentThread().getContextClassLoader())
                    .getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | LinkageError e) {
            throw new CommandLine.ParameterException(cl, "--workflows " + workflowsClass + ": cannot create it ("
                    + e + "); put your application on the class path and name a public class with a public"
                    + " no-argument constructor");
        }
        if (!(supplier instanceof Supplier<?> s) || !(s.get() instanceof Collection<?> all)
                || !all.stream().allMatch(Workflow.class::isInstance)) {
            throw new CommandLine.ParameterException(cl, "--workflows " + workflowsClass
                    + " must implement Supplier<Collection<Workflow<?>>>");
        }
        return all.stream().<Workflow<?>>map(w -> (Workflow<?>) w).toList();
    }

    @Override
    TaskActions.Action action() {
        return (client, id, note) -> {
            try {
                mover.operations().moveVersion(id, toVersion, note);
                return null;
            } catch (VersionMoveException e) {
                return e.getMessage();
            }
        };
    }

    @Override
    String doneText(SasClient client, TaskId id) {
        return "moved to v" + toVersion + ", now " + client.find(id).map(t -> t.status() + " at step "
                + t.currentStep()).orElse("gone");
    }
}
