-- processed: arrivals_by_id
/* queuetop */ SELECT TOP (?) [ID], NULL, NULL FROM [dbo].[work_items] WITH (NOLOCK) WHERE [ID] > CAST(? AS bigint) ORDER BY [ID];
