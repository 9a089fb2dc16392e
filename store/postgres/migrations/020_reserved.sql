-- Reserved for issue 14's child workflows (branch child14), which number their migration 020;
-- a placeholder so that 021 applies on this branch alone (migrations have no gaps). The merge
-- replaces this file with theirs.
SELECT 1;
