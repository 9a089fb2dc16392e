-- A placeholder for the migration another branch ships under this number (child14), so this
-- branch's later migration applies without a gap. Drop this file when merging that branch.
SELECT 1;
