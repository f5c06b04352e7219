CREATE TABLE test_notes (item_id bigint NOT NULL REFERENCES test_items (id), note text NOT NULL);
