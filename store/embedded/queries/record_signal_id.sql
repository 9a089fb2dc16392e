-- Records a signal id with what became of its first sending. ?1 run, ?2 signal id, ?3 delivered.
INSERT INTO signal_ids (run_id, signal_id, delivered) VALUES (?1, ?2, ?3)
