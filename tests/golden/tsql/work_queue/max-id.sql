-- work_queue: max_id
/* queuetop */ SELECT MAX([work_queue_id]) FROM [dbo].[work_queue] WITH (NOLOCK);
