-- work_queue: shape_heads a new type
/* queuetop */ SELECT 'heads', NULL, MIN(qt_at), CAST(NULL AS datetime2(3)), COUNT(*), MIN(qt_id), CAST(NULL AS bigint) FROM (SELECT TOP (?) CAST(NULL AS datetime2(3)) AS qt_at, [work_queue_id] AS qt_id FROM [dbo].[work_queue] WITH (NOLOCK) WHERE [processed_flag] = 0 AND [work_queue_id] >= CAST(? AS int) ORDER BY [work_queue_id]) AS qt_capped;
