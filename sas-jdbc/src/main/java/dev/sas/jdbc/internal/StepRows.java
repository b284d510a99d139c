package dev.sas.jdbc.internal;

import static dev.sas.jdbc.internal.Rows.millisOrNull;

import dev.sas.core.spi.StepUpdate;
import dev.sas.core.spi.Transition;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.util.List;

/** The step rows of applied transitions, for {@link TransitionWriter}. Plain JDBC (the write path). Thread-safe. */
final class StepRows {

    private final StoreContext db;
    /** One upsert from arrays where the dialect has it, else null. */
    private final String upsertStepsFromArrays;

    StepRows(StoreContext db) {
        this.db = db;
        this.upsertStepsFromArrays = db.dialect().upsertStepFromArraysSql(db.t());
    }

    /** Step rows of applied transitions: multi-row upserts, or one upsert from arrays where the dialect has it. */
    void upsert(Connection c, List<Transition> rows) throws SQLException {
        if (upsertStepsFromArrays != null && rows.size() >= 2) {
            ArrayColumns columns = new ArrayColumns(rows.size(), Dialect.STEP_COLUMN_TYPES);
            for (int k = 0; k < rows.size(); k++) {
                columns.setRow(k, stepValues(rows.get(k)));
            }
            try (PreparedStatement ps = c.prepareStatement(upsertStepsFromArrays)) {
                columns.bind(c, ps, 1);
                ps.executeUpdate();
            }
            return;
        }
        Rows.insertRows(c, rows, n -> db.dialect().upsertStepSql(db.t(), n),
                (ps, k, x) -> ArrayColumns.bindRow(ps, k, stepValues(x), Dialect.STEP_COLUMN_TYPES));
    }

    /** A transition's step row, in {@link Dialect#STEP_COLUMN_TYPES} order. */
    private static Object[] stepValues(Transition x) {
        StepUpdate u = x.step();
        return new Object[] {x.taskId().value(), u.index(), u.name(), u.status() == null ? null : u.status().name(),
            u.attempts(), u.output(), u.error(), millisOrNull(u.startedAt()), millisOrNull(u.finishedAt())};
    }
}
