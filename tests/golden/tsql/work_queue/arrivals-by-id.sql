-- work_queue: arrivals_by_id
/* queuetop */ SELECT TOP (?) [work_queue_id], NULL, NULL FROM [dbo].[work_queue] WITH (NOLOCK) WHERE [work_queue_id] > CAST(? AS int) ORDER BY [work_queue_id];
