-- processed: max_id
/* queuetop */ SELECT MAX([ID]) FROM [dbo].[work_items] WITH (NOLOCK);
