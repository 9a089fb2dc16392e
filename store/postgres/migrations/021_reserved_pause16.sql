-- A placeholder for the migration another branch ships under this number (pause16), so this
-- branch's later migration applies without a gap. Drop this file when merging that branch.
SELECT 1;
