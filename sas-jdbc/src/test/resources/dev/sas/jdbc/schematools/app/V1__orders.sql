-- The application's own first migration, beside SAS's V1 (SchemaToolsTest).
CREATE TABLE orders (
    id     VARCHAR(64) NOT NULL PRIMARY KEY,
    amount INT         NOT NULL
);
