-- Seed 001 (/work/shared/seeds/001_977a0ba239bbb089.txt): the tables and procedures of the post, blank lines of
-- its HTML removed. Two repairs of the page's transcription, not of the SQL: the completed table's last
-- `ON [PRIMARY` lost its `]`, and the two procedures, shown as separate snippets, are separated by GO (a CREATE
-- PROCEDURE must be alone in its batch; the check of this file proves that rule fires without it).
CREATE TABLE [dbo].[RequestsQueue](
      [id] [uniqueidentifier] NOT NULL
CONSTRAINT [DF_RequestsQueue_id]
DEFAULT (newid()),
      [request] [varchar](512) NOT NULL,
      [InsertedDate] [datetime] NOT NULL
CONSTRAINT [DF_RequestsQueue_InsertedDate]
DEFAULT (getdate()),
 CONSTRAINT [PK_RequestsQueue] PRIMARY KEY NONCLUSTERED
(
      [id] ASC
)WITH (PAD_INDEX  = OFF, IGNORE_DUP_KEY = OFF) ON [PRIMARY]
) ON [PRIMARY]

CREATE TABLE [dbo].[RequestsCompleted](
      [id] [uniqueidentifier] NOT NULL
CONSTRAINT [DF_RequestsCompleted_id]
DEFAULT (newid()),
      [request] [varchar](512) NOT NULL,
      [InsertedDate] [datetime] NOT NULL
CONSTRAINT [DF_RequestsCompleted_InsertedDate]
DEFAULT (getdate()),
      [RemovedDate] [datetime] NOT NULL
CONSTRAINT [DF_RequestsCompleted_RemovedDate]
DEFAULT (getdate()),
      [CompletedDate] [datetime] NULL
) ON [PRIMARY]
GO
CREATE PROCEDURE [dbo].[usp_Request_Pop]
AS
BEGIN
declare
@request varchar(512),
@id uniqueidentifier,
@InsertedDate datetime
    /*
    The queue works like this:
    - Get the first record in the queue
    - "Move" the recor to the RequestCompleted table
    - return the request to the caller
    We use a locking cursor so the same record cannot be
    returned to two different clients
    */
      SET NOCOUNT ON;
      set @id=null
begin transaction
      DECLARE Stack_Cursor CURSOR FOR
            SELECT TOP 1 id, request, InsertedDate
            FROM RequestsQueue with (ROWLOCK, FASTFIRSTROW, XLOCK)
      OPEN Stack_Cursor;
      FETCH NEXT FROM Stack_Cursor INTO @id, @request, @InsertedDate
      IF @@FETCH_STATUS = 0
      BEGIN
            delete RequestsQueue where current of Stack_Cursor
      END;
      CLOSE Stack_Cursor;
      DEALLOCATE Stack_Cursor;
commit transaction
if not @id is null
begin
    -- OPTIONAL store to the Completed table.
      insert into RequestsCompleted (id, request, insertedDate)
            values (@id, @request, @InsertedDate)
      -- return data to caller
      select @id as id, @request as request, @InsertedDate as InsertedDate
end
END
GO
CREATE PROCEDURE [dbo].[usp_Request_Push]
@request varchar(512)
AS
BEGIN
   SET NOCOUNT ON;
   insert into RequestsQueue(request) values (@request)
END
