-- requests: shape_heads a new type
/* queuetop */ SELECT 'heads', NULL, MIN(qt_at), CAST(NULL AS datetime), COUNT(*), CAST(NULL AS bigint), CAST(NULL AS bigint) FROM (SELECT TOP (?) [InsertedDate] AS qt_at FROM [dbo].[RequestsQueue] WITH (NOLOCK) WHERE 1 = 1 ORDER BY [InsertedDate]) AS qt_capped;
