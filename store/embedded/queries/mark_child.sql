-- Marks a run a child (runs.is_child, 015_children.sql), with its link: a new child
-- (link_child.sql) or the run that continues one (copy_child_link.sql). ?1 run.
UPDATE runs SET is_child = 1 WHERE id = ?1
