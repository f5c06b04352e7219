-- Numbered below V3 of the "ok" location, as a module added after V3 was applied would be.
CREATE TABLE test_late (v text);
