-- processed: shape_heads a new type
/* queuetop */ SELECT 'heads', NULL, MIN(qt_at), CAST(NULL AS datetime2(3)), COUNT(*), MIN(qt_id), CAST(NULL AS bigint) FROM (SELECT TOP (?) CAST(NULL AS datetime2(3)) AS qt_at, [ID] AS qt_id FROM [dbo].[work_items] WITH (NOLOCK) WHERE [PROCESSED] = 0 AND [ID] >= CAST(? AS bigint) ORDER BY [ID]) AS qt_capped;
