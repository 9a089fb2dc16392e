-- Records a branch's end. ?1 run, ?2 status, ?3 output, ?4 error.
UPDATE run_branches SET status = ?2, output = ?3, error = ?4 WHERE run_id = ?1
