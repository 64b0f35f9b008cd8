-- job_queue: created_of
/* queuetop */ SELECT [ID], [Available_Date] FROM [dbo].[Job_Queue] WITH (NOLOCK) WHERE [ID] IN (?, ?);
