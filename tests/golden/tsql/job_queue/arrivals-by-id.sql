-- job_queue: arrivals_by_id
/* queuetop */ SELECT TOP (?) [ID], NULL, [Available_Date] FROM [dbo].[Job_Queue] WITH (NOLOCK) WHERE [ID] > CAST(? AS bigint) ORDER BY [ID];
