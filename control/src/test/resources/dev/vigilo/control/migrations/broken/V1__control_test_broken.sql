CREATE TABLE test_broken (v text);
INSERT INTO test_broken (no_such_column) VALUES ('x');
