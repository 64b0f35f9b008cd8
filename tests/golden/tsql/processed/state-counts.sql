-- processed: state_counts
/* queuetop */ SELECT 'now' AS qt_part, NULL AS qt_type, SYSUTCDATETIME() AS qt_oldest, CAST(NULL AS bigint), CAST(NULL AS bigint) UNION ALL SELECT 'queue', NULL, NULL, COUNT(*), MIN([ID]) FROM [dbo].[work_items] WITH (NOLOCK) WHERE [PROCESSED] = 0;
