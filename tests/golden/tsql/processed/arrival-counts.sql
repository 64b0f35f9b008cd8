-- processed: arrival_counts
/* queuetop */ SELECT NULL, NULL, COUNT(*), SUM(CASE WHEN [ID] > CAST(? AS bigint) THEN 1 ELSE 0 END), MAX([ID]) FROM [dbo].[work_items] WITH (NOLOCK) WHERE [ID] > CAST(? AS bigint);
