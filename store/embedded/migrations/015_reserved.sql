-- Reserved for issue 14's child workflows (branch child14), which number their migration 015;
-- a placeholder so that 016 applies on this branch alone (migrations have no gaps). The merge
-- replaces this file with theirs.
SELECT 1;
