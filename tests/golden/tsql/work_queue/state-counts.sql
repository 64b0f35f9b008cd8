-- work_queue: state_counts
/* queuetop */ SELECT 'now' AS qt_part, NULL AS qt_type, SYSUTCDATETIME() AS qt_oldest, CAST(NULL AS bigint), CAST(NULL AS bigint) UNION ALL SELECT 'queue', NULL, NULL, COUNT(*), MIN([work_queue_id]) FROM [dbo].[work_queue] WITH (NOLOCK) WHERE [processed_flag] = 0;
