-- job_queue: max_id
/* queuetop */ SELECT MAX([ID]) FROM [dbo].[Job_Queue] WITH (NOLOCK);
