-- job_queue: arrivals_by_time
/* queuetop */ SELECT [ID], NULL, [Available_Date] FROM [dbo].[Job_Queue] WITH (NOLOCK) WHERE [Available_Date] > CAST(? AS datetime);
