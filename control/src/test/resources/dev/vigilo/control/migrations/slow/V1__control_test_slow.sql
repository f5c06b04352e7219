-- Slow on purpose, so that two concurrent migrations overlap and one must wait for Flyway's advisory lock.
SELECT pg_sleep(1.5);
CREATE TABLE test_slow (v text);
INSERT INTO test_slow (v) VALUES ('once');
